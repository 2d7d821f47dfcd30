<?php

declare(strict_types=1);

namespace Demo\Validation;

/**
 * Length in characters (UTF-8 code points), counted without mbstring.
 */
final class Length implements RuleInterface
{
    public function __construct(private readonly int $min, private readonly int $max)
    {
    }

    public function check(string $label, string $value): ?string
    {
        if ($value === '') {
            return null;
        }
        $length = preg_match_all('/./su', $value);
        if ($length === false) {
            return sprintf('%s contains invalid characters.', $label);
        }
        if ($length < $this->min) {
            return sprintf('%s must be at least %d characters long.', $label, $this->min);
        }
        if ($length > $this->max) {
            return sprintf('%s must be at most %d characters long.', $label, $this->max);
        }

        return null;
    }
}
