<?php

declare(strict_types=1);

namespace Demo\Validation;

/**
 * Cheap spam heuristic: too many URLs in a free-text field.
 */
final class MaxLinks implements RuleInterface
{
    public function __construct(private readonly int $max)
    {
    }

    public function check(string $label, string $value): ?string
    {
        $links = preg_match_all('#\bhttps?://#i', $value);

        return $links > $this->max
            ? sprintf('%s may contain at most %d links.', $label, $this->max)
            : null;
    }
}
