<?php

declare(strict_types=1);

namespace Demo\Support;

final class Paginator
{
    public readonly int $page;
    public readonly int $pages;

    public function __construct(
        public readonly int $total,
        public readonly int $perPage,
        int $requestedPage,
    ) {
        $this->pages = max(1, (int) ceil($total / max(1, $perPage)));
        $this->page = max(1, min($this->pages, $requestedPage));
    }

    public function offset(): int
    {
        return ($this->page - 1) * $this->perPage;
    }

    /**
     * @template T
     * @param list<T> $items
     * @return list<T>
     */
    public function slice(array $items): array
    {
        return array_slice($items, $this->offset(), $this->perPage);
    }

    public function hasPrevious(): bool
    {
        return $this->page > 1;
    }

    public function hasNext(): bool
    {
        return $this->page < $this->pages;
    }

    /**
     * Page numbers to show, with null marking a gap: 1 … 4 5 [6] 7 8 … 12
     *
     * @return list<int|null>
     */
    public function window(int $radius = 2): array
    {
        $pages = [];
        $last = 0;
        for ($p = 1; $p <= $this->pages; $p++) {
            $edge = $p === 1 || $p === $this->pages;
            if (!$edge && abs($p - $this->page) > $radius) {
                continue;
            }
            if ($last !== 0 && $p - $last > 1) {
                $pages[] = null;
            }
            $pages[] = $p;
            $last = $p;
        }

        return $pages;
    }
}
