<?php declare(strict_types=1);
/**
 * @var \Demo\View\Template $this
 * @var \Demo\Domain\Article $article
 * @var string $readingTime
 */
$parts = [
    'By ' . $this->e($article->author->name),
    '<time datetime="' . $this->date($article->publishedAt, DATE_ATOM) . '">' . $this->date($article->publishedAt) . '</time>',
    $this->e($readingTime),
    $this->plural($article->views, 'view'),
];
?>
<p class="meta"><?= implode(' · ', $parts) ?></p>
