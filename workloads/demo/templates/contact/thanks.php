<?php declare(strict_types=1);
/**
 * @var \Demo\View\Template $this
 * @var \Demo\Domain\ContactMessage $message
 */
$this->layout('layout', ['active' => 'contact']);
?>
<!-- phptune-demo:contact -->
<h1>Thank you, <?= $this->e($message->name) ?>!</h1>
<p>We received your message and will answer at <strong><?= $this->e($message->email) ?></strong>.</p>
<p>Your reference: <code><?= $this->e($message->reference()) ?></code></p>
<blockquote><p><?= nl2br($this->e($message->message), false) ?></p></blockquote>
<p><a href="<?= $this->url('articles') ?>">Back to the articles</a></p>
