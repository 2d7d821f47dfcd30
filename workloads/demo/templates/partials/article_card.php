<?php declare(strict_types=1);
/**
 * @var \Demo\View\Template $this
 * @var \Demo\Presentation\ArticleSummary $summary
 */
$article = $summary->article;
?>
<article class="card">
<h2><a href="<?= $this->url('article', ['id' => $article->id]) ?>"><?= $this->e($article->title) ?></a></h2>
<?php $this->insert('partials/meta', ['article' => $article, 'readingTime' => $summary->readingTime]) ?>
<p><?= $this->e($summary->excerpt) ?></p>
<p><?php foreach ($article->tags as $tag): ?><a class="tag" href="<?= $this->url('articles', [], ['tag' => $tag]) ?>">#<?= $this->e($tag) ?></a><?php endforeach ?></p>
</article>
