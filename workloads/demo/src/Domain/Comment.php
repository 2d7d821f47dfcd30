<?php

declare(strict_types=1);

namespace Demo\Domain;

use DateTimeImmutable;

final readonly class Comment
{
    public function __construct(
        public int $id,
        public string $handle,
        public DateTimeImmutable $postedAt,
        public string $body,
        public ?int $inReplyTo = null,
    ) {
    }

    /**
     * Stable avatar colour derived from the handle, like an identicon.
     */
    public function avatarColour(): string
    {
        $hash = md5($this->handle);
        $rgb = [];
        foreach ([0, 2, 4] as $offset) {
            // keep the colour dark enough for white initials
            $rgb[] = sprintf('%02x', (int) (hexdec(substr($hash, $offset, 2)) * 0.6));
        }

        return '#' . implode('', $rgb);
    }

    public function initials(): string
    {
        $parts = explode('_', $this->handle);

        return strtoupper(substr($parts[0], 0, 1) . substr($parts[1] ?? '', 0, 1));
    }
}
