<?php declare(strict_types=1);
/**
 * @var \Demo\View\Template $this
 * @var \Demo\Support\Paginator $paginator
 * @var string $route
 * @var array<string, string|int|null> $query
 */
?>
<?php if ($paginator->pages > 1): ?>
<nav class="pages" aria-label="Pagination">
<?php if ($paginator->hasPrevious()): ?>
<a rel="prev" href="<?= $this->url($route, [], $query + ['page' => $paginator->page - 1]) ?>">&larr; Newer</a>
<?php endif ?>
<?php foreach ($paginator->window() as $page): ?>
<?php if ($page === null): ?>
<span>…</span>
<?php elseif ($page === $paginator->page): ?>
<span aria-current="page"><strong><?= $page ?></strong></span>
<?php else: ?>
<a href="<?= $this->url($route, [], $query + ['page' => $page]) ?>"><?= $page ?></a>
<?php endif ?>
<?php endforeach ?>
<?php if ($paginator->hasNext()): ?>
<a rel="next" href="<?= $this->url($route, [], $query + ['page' => $paginator->page + 1]) ?>">Older &rarr;</a>
<?php endif ?>
</nav>
<?php endif ?>
