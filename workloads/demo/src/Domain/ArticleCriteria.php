<?php

declare(strict_types=1);

namespace Demo\Domain;

final readonly class ArticleCriteria
{
    public function __construct(
        public ?string $tag = null,
        public ?int $authorId = null,
        public ArticleSort $sort = ArticleSort::Newest,
    ) {
    }

    public function accepts(Article $article): bool
    {
        if ($this->tag !== null && !$article->hasTag($this->tag)) {
            return false;
        }

        return $this->authorId === null || $article->author->id === $this->authorId;
    }
}
