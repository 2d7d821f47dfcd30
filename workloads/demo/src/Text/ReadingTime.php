<?php

declare(strict_types=1);

namespace Demo\Text;

final class ReadingTime
{
    public function __construct(private readonly int $wordsPerMinute = 220)
    {
    }

    public function words(string $plainText): int
    {
        return str_word_count($plainText);
    }

    public function minutes(int $words): int
    {
        return max(1, (int) ceil($words / $this->wordsPerMinute));
    }

    public function label(int $words): string
    {
        $minutes = $this->minutes($words);

        return $minutes . ' min read';
    }
}
