<?php

declare(strict_types=1);

namespace Demo\Domain;

final readonly class Author
{
    public function __construct(
        public int $id,
        public string $name,
        public string $bio,
    ) {
    }

    public function initials(): string
    {
        $initials = '';
        foreach (preg_split('/\s+/', trim($this->name)) ?: [] as $part) {
            if ($part !== '' && ctype_alpha($part[0])) {
                $initials .= strtoupper($part[0]);
            }
        }

        return $initials;
    }
}
