<?php

declare(strict_types=1);

namespace Demo\Validation;

final class Email implements RuleInterface
{
    public function check(string $label, string $value): ?string
    {
        if ($value === '') {
            return null;
        }

        return filter_var($value, FILTER_VALIDATE_EMAIL) === false
            ? sprintf('%s must be a valid e-mail address.', $label)
            : null;
    }
}
