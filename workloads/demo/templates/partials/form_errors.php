<?php declare(strict_types=1);
/**
 * @var \Demo\View\Template $this
 * @var array<string, list<string>> $errors
 */
?>
<?php if ($errors !== []): ?>
<div class="errors" role="alert">
<p><strong>Please correct <?= $this->plural(count($errors), 'field') ?>:</strong></p>
<ul>
<?php foreach ($errors as $field => $messages): ?>
<?php foreach ($messages as $message): ?>
<li data-field="<?= $this->e($field) ?>"><?= $this->e($message) ?></li>
<?php endforeach ?>
<?php endforeach ?>
</ul>
</div>
<?php endif ?>
