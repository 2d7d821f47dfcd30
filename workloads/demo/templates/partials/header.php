<?php declare(strict_types=1);
/**
 * @var \Demo\View\Template $this
 * @var array<string, array{route: string, label: string}> $navigation
 * @var string $active
 */
?>
<header class="site">
<a href="<?= $this->url('home') ?>"><strong><?= $this->e($appName) ?></strong></a>
<?php foreach ($navigation as $key => $item): ?>
<a href="<?= $this->url($item['route']) ?>"<?= $key === $active ? ' class="active" aria-current="page"' : '' ?>><?= $this->e($item['label']) ?></a>
<?php endforeach ?>
</header>
