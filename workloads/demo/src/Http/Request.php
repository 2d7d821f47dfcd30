<?php

declare(strict_types=1);

namespace Demo\Http;

/**
 * Immutable view of the incoming HTTP request.
 */
final class Request
{
    /**
     * @param array<array-key, mixed> $query
     * @param array<array-key, mixed> $body
     * @param array<string, string>   $headers lower-case names
     * @param array<string, mixed>    $attributes
     */
    public function __construct(
        public readonly string $method,
        public readonly string $path,
        private readonly array $query = [],
        private readonly array $body = [],
        private readonly array $headers = [],
        public readonly int $startedAt = 0,
        private array $attributes = [],
    ) {
    }

    /**
     * @param array<array-key, mixed> $server
     * @param array<array-key, mixed> $get
     * @param array<array-key, mixed> $post
     */
    public static function fromGlobals(array $server, array $get, array $post, ?int $startedAt = null): self
    {
        $method = strtoupper(self::serverString($server, 'REQUEST_METHOD', 'GET'));
        $uri = self::serverString($server, 'REQUEST_URI', '/');

        $queryPos = strpos($uri, '?');
        $rawPath = $queryPos === false ? $uri : substr($uri, 0, $queryPos);
        $rawQuery = $queryPos === false ? '' : substr($uri, $queryPos + 1);

        // "/index.php/articles/3" addresses the front controller explicitly
        $scriptName = self::serverString($server, 'SCRIPT_NAME', '');
        if ($scriptName !== '' && str_ends_with($scriptName, '.php') && str_starts_with($rawPath, $scriptName)) {
            $rest = substr($rawPath, strlen($scriptName));
            if ($rest === '' || $rest[0] === '/') {
                $rawPath = $rest === '' ? '/' : $rest;
            }
        }

        if ($get === [] && $rawQuery !== '') {
            parse_str($rawQuery, $get);
        }

        $headers = [];
        foreach ($server as $key => $value) {
            if (!is_string($key) || !is_string($value)) {
                continue;
            }
            if (str_starts_with($key, 'HTTP_')) {
                $headers[strtolower(str_replace('_', '-', substr($key, 5)))] = $value;
            } elseif ($key === 'CONTENT_TYPE' || $key === 'CONTENT_LENGTH') {
                $headers[strtolower(str_replace('_', '-', $key))] = $value;
            }
        }

        return new self(
            $method,
            self::normalisePath($rawPath),
            $get,
            $post,
            $headers,
            $startedAt ?? hrtime(true),
        );
    }

    public static function normalisePath(string $rawPath): string
    {
        // absolute-form request target: "http://host/path"
        if (preg_match('#^[A-Za-z][A-Za-z0-9+.-]*://[^/]*#', $rawPath, $m) === 1) {
            $rawPath = substr($rawPath, strlen($m[0]));
        }

        $path = '/' . ltrim(rawurldecode($rawPath), '/');
        $path = (string) preg_replace('#/{2,}#', '/', $path);
        if ($path !== '/') {
            $path = rtrim($path, '/');
        }

        return $path === '' ? '/' : $path;
    }

    public function isMethod(string $method): bool
    {
        return $this->method === strtoupper($method);
    }

    public function isReadOnly(): bool
    {
        return $this->method === 'GET' || $this->method === 'HEAD';
    }

    public function query(string $key, ?string $default = null): ?string
    {
        $value = $this->query[$key] ?? null;

        return is_string($value) ? $value : $default;
    }

    public function queryInt(string $key, int $default, int $min = PHP_INT_MIN, int $max = PHP_INT_MAX): int
    {
        $value = $this->query($key);
        if ($value === null || preg_match('/^-?\d{1,9}$/', $value) !== 1) {
            return $default;
        }

        return max($min, min($max, (int) $value));
    }

    /**
     * @return array<array-key, mixed>
     */
    public function body(): array
    {
        return $this->body;
    }

    public function header(string $name): ?string
    {
        return $this->headers[strtolower($name)] ?? null;
    }

    public function contentType(): string
    {
        $type = $this->header('content-type') ?? '';
        $semicolon = strpos($type, ';');

        return strtolower(trim($semicolon === false ? $type : substr($type, 0, $semicolon)));
    }

    public function wantsJson(): bool
    {
        return str_starts_with($this->path, '/api/') || $this->path === '/api';
    }

    public function withAttribute(string $name, mixed $value): self
    {
        $clone = clone $this;
        $clone->attributes[$name] = $value;

        return $clone;
    }

    public function attribute(string $name, mixed $default = null): mixed
    {
        return $this->attributes[$name] ?? $default;
    }

    /**
     * @param array<array-key, mixed> $server
     */
    private static function serverString(array $server, string $key, string $default): string
    {
        $value = $server[$key] ?? null;

        return is_string($value) && $value !== '' ? $value : $default;
    }
}
