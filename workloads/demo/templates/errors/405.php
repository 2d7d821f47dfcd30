<?php declare(strict_types=1);
/**
 * @var \Demo\View\Template $this
 * @var string $method
 * @var list<string> $allowed
 */
$this->layout('layout', ['active' => '']);
?>
<!-- phptune-demo:method -->
<h1>Method not allowed</h1>
<p><code><?= $this->e($method) ?></code> is not supported here. Allowed: <?= $this->e(implode(', ', $allowed)) ?>.</p>
