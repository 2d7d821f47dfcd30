<?php

declare(strict_types=1);

namespace Demo\Presentation;

use DateTimeInterface;
use Demo\Domain\Article;
use Demo\Routing\UrlGeneratorInterface;

/**
 * JSON shapes of the public API.
 */
final class ArticleSerializer
{
    public function __construct(private readonly UrlGeneratorInterface $urls)
    {
    }

    /**
     * @return array<string, mixed>
     */
    public function reference(Article $article): array
    {
        return [
            'id' => $article->id,
            'title' => $article->title,
            'url' => $this->urls->generate('api_article', ['id' => $article->id]),
        ];
    }

    /**
     * @return array<string, mixed>
     */
    public function summary(ArticleSummary $summary): array
    {
        $article = $summary->article;

        return [
            'id' => $article->id,
            'slug' => $article->slug,
            'title' => $article->title,
            'author' => ['id' => $article->author->id, 'name' => $article->author->name],
            'tags' => $article->tags,
            'published_at' => $article->publishedAt->format(DateTimeInterface::ATOM),
            'views' => $article->views,
            'words' => $summary->words,
            'reading_time' => $summary->readingTime,
            'excerpt' => $summary->excerpt,
            'links' => [
                'self' => $this->urls->generate('api_article', ['id' => $article->id]),
                'html' => $this->urls->generate('article', ['id' => $article->id]),
            ],
        ];
    }

    /**
     * @return array<string, mixed>
     */
    public function detail(ArticleDetail $detail): array
    {
        return $this->summary($detail->summary) + [
            'toc' => $detail->document->headings,
            'body_html' => $detail->document->html,
            'checksum' => $detail->checksum,
            'related' => array_map(
                fn (ArticleSummary $related): array => $this->reference($related->article) + [
                    'reading_time' => $related->readingTime,
                    'excerpt' => $related->excerpt,
                ],
                $detail->related,
            ),
            'comments' => array_map(static fn (CommentView $view): array => [
                'id' => $view->comment->id,
                'author' => $view->comment->handle,
                'posted_at' => $view->comment->postedAt->format(DateTimeInterface::ATOM),
                'in_reply_to' => $view->comment->inReplyTo,
                'body_html' => $view->html,
            ], $detail->comments),
            'previous' => $detail->previous === null ? null : $this->reference($detail->previous),
            'next' => $detail->next === null ? null : $this->reference($detail->next),
        ];
    }
}
