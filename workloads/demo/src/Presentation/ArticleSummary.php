<?php

declare(strict_types=1);

namespace Demo\Presentation;

use Demo\Domain\Article;

final readonly class ArticleSummary
{
    public function __construct(
        public Article $article,
        public string $excerpt,
        public int $words,
        public string $readingTime,
    ) {
    }
}
