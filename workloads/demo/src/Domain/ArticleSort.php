<?php

declare(strict_types=1);

namespace Demo\Domain;

enum ArticleSort: string
{
    case Newest = 'newest';
    case Oldest = 'oldest';
    case Popular = 'popular';
    case Title = 'title';

    public static function fromQuery(?string $value): self
    {
        return self::tryFrom(strtolower((string) $value)) ?? self::Newest;
    }

    public function label(): string
    {
        return match ($this) {
            self::Newest => 'Newest first',
            self::Oldest => 'Oldest first',
            self::Popular => 'Most read',
            self::Title => 'Title A–Z',
        };
    }

    public function compare(Article $a, Article $b): int
    {
        return match ($this) {
            self::Newest => [$b->publishedAt, $b->id] <=> [$a->publishedAt, $a->id],
            self::Oldest => [$a->publishedAt, $a->id] <=> [$b->publishedAt, $b->id],
            self::Popular => [$b->views, $a->id] <=> [$a->views, $b->id],
            self::Title => [strtolower($a->title), $a->id] <=> [strtolower($b->title), $b->id],
        };
    }
}
