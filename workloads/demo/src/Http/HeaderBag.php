<?php

declare(strict_types=1);

namespace Demo\Http;

use InvalidArgumentException;

/**
 * Case-insensitive header collection that keeps the first spelling of each name.
 */
final class HeaderBag
{
    /** @var array<string, array{name: string, values: list<string>}> */
    private array $headers = [];

    /**
     * @param array<string, string> $headers
     */
    public function __construct(array $headers = [])
    {
        foreach ($headers as $name => $value) {
            $this->set($name, $value);
        }
    }

    public function set(string $name, string $value): void
    {
        $this->assertValid($name, $value);
        $this->headers[strtolower($name)] = ['name' => $name, 'values' => [$value]];
    }

    public function add(string $name, string $value): void
    {
        $this->assertValid($name, $value);
        $key = strtolower($name);
        if (!isset($this->headers[$key])) {
            $this->headers[$key] = ['name' => $name, 'values' => []];
        }
        $this->headers[$key]['values'][] = $value;
    }

    public function has(string $name): bool
    {
        return isset($this->headers[strtolower($name)]);
    }

    public function get(string $name): ?string
    {
        $entry = $this->headers[strtolower($name)] ?? null;

        return $entry === null ? null : implode(', ', $entry['values']);
    }

    public function remove(string $name): void
    {
        unset($this->headers[strtolower($name)]);
    }

    /**
     * @return iterable<string, list<string>>
     */
    public function all(): iterable
    {
        foreach ($this->headers as $entry) {
            yield $entry['name'] => $entry['values'];
        }
    }

    private function assertValid(string $name, string $value): void
    {
        if (preg_match('/^[A-Za-z0-9!#$%&\'*+.^_`|~-]+$/', $name) !== 1) {
            throw new InvalidArgumentException(sprintf('Invalid header name "%s".', $name));
        }
        if (strpbrk($value, "\r\n\0") !== false) {
            throw new InvalidArgumentException(sprintf('Invalid value for header "%s".', $name));
        }
    }
}
