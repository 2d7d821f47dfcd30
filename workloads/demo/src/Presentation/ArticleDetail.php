<?php

declare(strict_types=1);

namespace Demo\Presentation;

use Demo\Domain\Article;
use Demo\Text\RenderedDocument;

final readonly class ArticleDetail
{
    /**
     * @param list<ArticleSummary> $related
     * @param list<CommentView>    $comments
     */
    public function __construct(
        public ArticleSummary $summary,
        public RenderedDocument $document,
        public array $related,
        public array $comments,
        public ?Article $previous,
        public ?Article $next,
        public string $checksum,
    ) {
    }

    public function article(): Article
    {
        return $this->summary->article;
    }
}
