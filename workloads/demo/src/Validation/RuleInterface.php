<?php

declare(strict_types=1);

namespace Demo\Validation;

interface RuleInterface
{
    /**
     * @return string|null an error message, or null when the value passes
     */
    public function check(string $label, string $value): ?string;
}
