<?php

declare(strict_types=1);

namespace Demo\Presentation;

use Demo\Domain\Article;
use Demo\Domain\ArticleRepositoryInterface;
use Demo\Text\MarkdownRenderer;
use Demo\Text\ReadingTime;
use Demo\Text\RenderedDocument;

/**
 * Turns domain articles into view models shared by the HTML and JSON front ends.
 */
final class ArticlePresenter
{
    /** @var array<int, RenderedDocument> */
    private array $documents = [];

    public function __construct(
        private readonly ArticleRepositoryInterface $articles,
        private readonly MarkdownRenderer $markdown,
        private readonly ReadingTime $readingTime,
    ) {
    }

    public function summary(Article $article): ArticleSummary
    {
        $document = $this->document($article);

        return new ArticleSummary(
            $article,
            $document->excerpt(),
            $document->wordCount,
            $this->readingTime->label($document->wordCount),
        );
    }

    /**
     * @param list<Article> $articles
     * @return list<ArticleSummary>
     */
    public function summaries(array $articles): array
    {
        return array_map($this->summary(...), $articles);
    }

    public function detail(Article $article, int $relatedLimit = 6): ArticleDetail
    {
        $document = $this->document($article);
        $neighbours = $this->articles->neighbours($article);

        return new ArticleDetail(
            $this->summary($article),
            $document,
            $this->summaries($this->articles->related($article, $relatedLimit)),
            $this->comments($article),
            $neighbours['previous'],
            $neighbours['next'],
            hash('sha256', $article->body()),
        );
    }

    /**
     * @return list<CommentView>
     */
    private function comments(Article $article): array
    {
        $handles = [];
        $views = [];
        foreach ($this->articles->comments($article) as $comment) {
            $handles[$comment->id] = $comment->handle;
            $views[] = new CommentView(
                $comment,
                $this->markdown->render($comment->body)->html,
                $comment->inReplyTo === null ? null : ($handles[$comment->inReplyTo] ?? null),
            );
        }

        return $views;
    }

    private function document(Article $article): RenderedDocument
    {
        return $this->documents[$article->id] ??= $this->markdown->render($article->body());
    }
}
