<?php declare(strict_types=1);
/** @var \Demo\View\Template $this */
?>
<footer class="site">
<small><?= $this->e($appName) ?> — a small PHP application used by phptune to measure nginx + php-fpm settings.
<a href="<?= $this->url('api_articles') ?>">JSON API</a></small>
</footer>
