<?php

declare(strict_types=1);

namespace Demo\Domain;

use Demo\Validation\ValidationResult;

final readonly class ContactMessage
{
    public function __construct(
        public string $name,
        public string $email,
        public string $message,
    ) {
    }

    public static function fromValidated(ValidationResult $result): self
    {
        return new self($result->value('name'), $result->value('email'), $result->value('message'));
    }

    /**
     * Stable ticket reference derived from the content (nothing is stored).
     */
    public function reference(): string
    {
        return strtoupper(substr(hash('sha256', strtolower($this->email) . "\0" . $this->name . "\0" . $this->message), 0, 10));
    }
}
