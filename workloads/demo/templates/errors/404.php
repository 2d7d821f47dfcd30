<?php declare(strict_types=1);
/**
 * @var \Demo\View\Template $this
 * @var string $path
 */
$this->layout('layout', ['active' => '']);
?>
<!-- phptune-demo:notfound -->
<h1>Page not found</h1>
<p>Nothing lives at <code><?= $this->e($path) ?></code>.</p>
<p><a href="<?= $this->url('articles') ?>">Browse the articles</a> instead.</p>
