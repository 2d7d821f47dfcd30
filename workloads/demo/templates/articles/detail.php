<?php declare(strict_types=1);
/**
 * @var \Demo\View\Template $this
 * @var \Demo\Presentation\ArticleDetail $detail
 * @var \Demo\Domain\Article $article
 */
$this->layout('layout', ['active' => 'articles', 'description' => $detail->summary->excerpt]);
?>
<!-- phptune-demo:detail -->
<article data-id="<?= $article->id ?>" data-checksum="<?= $this->e(substr($detail->checksum, 0, 16)) ?>">
<p class="meta"><a href="<?= $this->url('articles') ?>">&larr; All articles</a></p>
<h1><?= $this->e($article->title) ?></h1>
<?php $this->insert('partials/meta', ['article' => $article, 'readingTime' => $detail->summary->readingTime]) ?>
<p><?php foreach ($article->tags as $tag): ?><a class="tag" href="<?= $this->url('articles', [], ['tag' => $tag]) ?>">#<?= $this->e($tag) ?></a><?php endforeach ?></p>
<div class="body">
<?= $detail->document->html /* built from escaped text by MarkdownRenderer */ ?>
</div>
<nav class="pages">
<?php if ($detail->previous !== null): ?>
<a rel="prev" href="<?= $this->url('article', ['id' => $detail->previous->id]) ?>">&larr; <?= $this->e($detail->previous->title) ?></a>
<?php endif ?>
<?php if ($detail->next !== null): ?>
<a rel="next" href="<?= $this->url('article', ['id' => $detail->next->id]) ?>"><?= $this->e($detail->next->title) ?> &rarr;</a>
<?php endif ?>
</nav>
</article>
<?php if ($detail->related !== []): ?>
<section class="related">
<h2>Read next</h2>
<?php foreach ($detail->related as $summary): ?>
<?php $this->insert('partials/article_card', ['summary' => $summary]) ?>
<?php endforeach ?>
</section>
<?php endif ?>
<?php $this->insert('partials/comments', ['comments' => $detail->comments]) ?>
<?php $this->start('aside') ?>
<?php if ($detail->document->headings !== []): ?>
<h3>Contents</h3>
<ol>
<?php foreach ($detail->document->headings as $heading): ?>
<li><a href="#<?= $this->e($heading['id']) ?>"><?= $this->e($heading['text']) ?></a></li>
<?php endforeach ?>
</ol>
<?php endif ?>
<h3>About the author</h3>
<p><strong><?= $this->e($article->author->name) ?></strong><br><?= $this->e($article->author->bio) ?></p>
<?php $this->stop() ?>
