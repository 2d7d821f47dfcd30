<?php declare(strict_types=1);
/** @var \Demo\View\Template $this */
$this->layout('layout', ['active' => '']);
?>
<!-- phptune-demo:error -->
<h1>Something went wrong</h1>
<p>The error has been logged. Please try again later.</p>
