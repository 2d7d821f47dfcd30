<?php

declare(strict_types=1);

namespace Demo\View;

use Stringable;

final class Escaper
{
    private const FLAGS = ENT_QUOTES | ENT_SUBSTITUTE | ENT_HTML5;

    public function html(mixed $value): string
    {
        return htmlspecialchars($this->stringify($value), self::FLAGS, 'UTF-8');
    }

    public function attr(mixed $value): string
    {
        return htmlspecialchars($this->stringify($value), self::FLAGS, 'UTF-8');
    }

    public function url(string $value): string
    {
        return rawurlencode($value);
    }

    private function stringify(mixed $value): string
    {
        return match (true) {
            $value === null => '',
            is_bool($value) => $value ? 'true' : 'false',
            is_scalar($value), $value instanceof Stringable => (string) $value,
            default => throw new \InvalidArgumentException('Cannot escape value of type ' . get_debug_type($value)),
        };
    }
}
