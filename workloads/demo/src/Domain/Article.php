<?php

declare(strict_types=1);

namespace Demo\Domain;

use Closure;
use DateTimeImmutable;

final class Article
{
    private ?string $body = null;

    /**
     * @param list<string>           $tags
     * @param Closure(): string      $bodyLoader lazily produces the markdown body
     */
    public function __construct(
        public readonly int $id,
        public readonly string $slug,
        public readonly string $title,
        public readonly Author $author,
        public readonly array $tags,
        public readonly DateTimeImmutable $publishedAt,
        public readonly int $views,
        private readonly Closure $bodyLoader,
    ) {
    }

    public function body(): string
    {
        return $this->body ??= ($this->bodyLoader)();
    }

    public function hasTag(string $tag): bool
    {
        return in_array($tag, $this->tags, true);
    }

    public function sharedTagCount(self $other): int
    {
        return count(array_intersect($this->tags, $other->tags));
    }
}
