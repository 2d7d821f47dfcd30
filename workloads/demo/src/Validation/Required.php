<?php

declare(strict_types=1);

namespace Demo\Validation;

final class Required implements RuleInterface
{
    public function check(string $label, string $value): ?string
    {
        return trim($value) === '' ? sprintf('%s is required.', $label) : null;
    }
}
