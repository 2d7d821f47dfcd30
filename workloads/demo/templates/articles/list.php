<?php declare(strict_types=1);
/**
 * @var \Demo\View\Template $this
 * @var list<\Demo\Presentation\ArticleSummary> $summaries
 * @var \Demo\Support\Paginator $paginator
 * @var string|null $tag
 * @var bool $knownTag
 * @var \Demo\Domain\ArticleSort $sort
 * @var list<\Demo\Domain\ArticleSort> $sorts
 */
$this->layout('layout', [
    'active' => 'articles',
    'description' => 'Articles about running PHP behind nginx, page ' . $paginator->page . ' of ' . $paginator->pages . '.',
]);
$query = ['tag' => $tag, 'sort' => $sort === \Demo\Domain\ArticleSort::Newest ? null : $sort->value];
?>
<!-- phptune-demo:list -->
<h1><?= $this->e($title) ?></h1>
<p class="meta">
<?= $this->plural($paginator->total, 'article') ?> · page <?= $paginator->page ?> of <?= $paginator->pages ?>
<?php if ($tag !== null): ?> · <a href="<?= $this->url('articles') ?>">clear filter</a><?php endif ?>
</p>
<form method="get" action="<?= $this->url('articles') ?>">
<?php if ($tag !== null): ?><input type="hidden" name="tag" value="<?= $this->e($tag) ?>"><?php endif ?>
<label for="sort">Sort
<select id="sort" name="sort">
<?php foreach ($sorts as $option): ?>
<option value="<?= $this->e($option->value) ?>"<?= $option === $sort ? ' selected' : '' ?>><?= $this->e($option->label()) ?></option>
<?php endforeach ?>
</select></label>
<button type="submit">Apply</button>
</form>
<?php if (!$knownTag): ?>
<p>There is no tag called “<?= $this->e($tag) ?>”.</p>
<?php elseif ($summaries === []): ?>
<p>No articles yet.</p>
<?php endif ?>
<?php foreach ($summaries as $summary): ?>
<?php $this->insert('partials/article_card', ['summary' => $summary]) ?>
<?php endforeach ?>
<?php $this->insert('partials/pagination', ['paginator' => $paginator, 'route' => 'articles', 'query' => $query]) ?>
<?php $this->start('aside') ?>
<?php $this->insert('partials/sidebar', ['tagCounts' => $tagCounts, 'authors' => $authors, 'tag' => $tag]) ?>
<?php $this->stop() ?>
