<?php

declare(strict_types=1);

namespace Demo\Support;

use InvalidArgumentException;

/**
 * Deterministic xorshift32 generator, so the catalogue is identical on every
 * platform and PHP build (mt_rand's sequence is not something to rely on).
 */
final class Prng
{
    private int $state;

    public function __construct(int $seed)
    {
        $state = $seed & 0xFFFFFFFF;
        $this->state = $state === 0 ? 0x9E3779B9 : $state;
        for ($i = 0; $i < 4; $i++) {
            $this->next();
        }
    }

    public static function derive(int $seed, string $salt): self
    {
        return new self(crc32($seed . ':' . $salt));
    }

    public function next(): int
    {
        $x = $this->state;
        $x ^= ($x << 13) & 0xFFFFFFFF;
        $x ^= $x >> 17;
        $x ^= ($x << 5) & 0xFFFFFFFF;

        return $this->state = $x;
    }

    public function int(int $min, int $max): int
    {
        if ($max < $min) {
            throw new InvalidArgumentException('max must not be below min');
        }

        return $min + $this->next() % ($max - $min + 1);
    }

    public function chance(int $percent): bool
    {
        return $this->next() % 100 < $percent;
    }

    /**
     * @template T
     * @param list<T> $items
     * @return T
     */
    public function pick(array $items): mixed
    {
        if ($items === []) {
            throw new InvalidArgumentException('Cannot pick from an empty list');
        }

        return $items[$this->next() % count($items)];
    }

    /**
     * Partial Fisher-Yates: $count distinct items in random order.
     *
     * @template T
     * @param list<T> $items
     * @return list<T>
     */
    public function sample(array $items, int $count): array
    {
        $n = count($items);
        $count = min($count, $n);
        for ($i = 0; $i < $count; $i++) {
            $j = $i + $this->next() % ($n - $i);
            [$items[$i], $items[$j]] = [$items[$j], $items[$i]];
        }

        return array_slice($items, 0, $count);
    }
}
