<?php

declare(strict_types=1);

namespace Demo\Http;

/**
 * Mutable HTTP response that is emitted once by the ResponseEmitter.
 */
class Response
{
    public readonly HeaderBag $headers;

    /**
     * @param array<string, string> $headers
     */
    public function __construct(
        private string $body = '',
        private Status $status = Status::Ok,
        array $headers = [],
    ) {
        $this->headers = new HeaderBag($headers);
        if (!$this->headers->has('Content-Type')) {
            $this->headers->set('Content-Type', 'text/html; charset=UTF-8');
        }
    }

    public static function html(string $body, Status $status = Status::Ok): self
    {
        return new self($body, $status);
    }

    public function body(): string
    {
        return $this->body;
    }

    public function setBody(string $body): void
    {
        $this->body = $body;
    }

    public function status(): Status
    {
        return $this->status;
    }

    public function setStatus(Status $status): void
    {
        $this->status = $status;
    }

    public function withHeader(string $name, string $value): static
    {
        $this->headers->set($name, $value);

        return $this;
    }
}
