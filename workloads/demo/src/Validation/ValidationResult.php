<?php

declare(strict_types=1);

namespace Demo\Validation;

final readonly class ValidationResult
{
    /**
     * @param array<string, string>       $values cleaned (trimmed) values
     * @param array<string, list<string>> $errors field => messages
     */
    public function __construct(
        public array $values,
        public array $errors,
    ) {
    }

    public function isValid(): bool
    {
        return $this->errors === [];
    }

    public function value(string $field): string
    {
        return $this->values[$field] ?? '';
    }

    /**
     * @return list<string>
     */
    public function allMessages(): array
    {
        return array_merge(...array_values($this->errors));
    }
}
