<?php declare(strict_types=1);
/**
 * @var \Demo\View\Template $this
 * @var array<string, string> $values
 * @var array<string, list<string>> $errors
 */
$this->layout('layout', ['active' => 'contact']);
?>
<?php if ($errors === []): ?>
<!-- phptune-demo:form -->
<?php else: ?>
<!-- phptune-demo:invalid -->
<?php endif ?>
<h1>Contact us</h1>
<p>Questions about the demo? Send a message; nothing is stored, we just say thanks.</p>
<?php $this->insert('partials/form_errors', ['errors' => $errors]) ?>
<form method="post" action="<?= $this->url('contact_submit') ?>">
<label for="name">Name</label>
<input id="name" name="name" required maxlength="80" value="<?= $this->e($values['name'] ?? '') ?>"<?= isset($errors['name']) ? ' aria-invalid="true"' : '' ?>>
<label for="email">E-mail</label>
<input id="email" name="email" type="email" required maxlength="254" value="<?= $this->e($values['email'] ?? '') ?>"<?= isset($errors['email']) ? ' aria-invalid="true"' : '' ?>>
<label for="message">Message</label>
<textarea id="message" name="message" rows="6" required<?= isset($errors['message']) ? ' aria-invalid="true"' : '' ?>><?= $this->e($values['message'] ?? '') ?></textarea>
<p><button type="submit">Send</button></p>
</form>
