<?php

declare(strict_types=1);

namespace Demo\Routing;

use InvalidArgumentException;

/**
 * A named route: "/articles/{id:\d+}" compiled to a regular expression.
 */
final class Route
{
    public readonly string $regex;

    /** @var list<string> */
    public readonly array $parameters;

    /**
     * @param list<string> $methods
     * @param array{0: string, 1: string} $handler service id and method name
     */
    public function __construct(
        public readonly string $name,
        public readonly array $methods,
        public readonly string $pattern,
        public readonly array $handler,
    ) {
        $parameters = [];
        $regex = '';
        $offset = 0;
        preg_match_all('/\{([a-z_][a-z0-9_]*)(?::([^{}]+))?\}/i', $pattern, $matches, PREG_SET_ORDER | PREG_OFFSET_CAPTURE);
        foreach ($matches as $match) {
            $regex .= preg_quote(substr($pattern, $offset, $match[0][1] - $offset), '#');
            $param = $match[1][0];
            $constraint = isset($match[2]) && $match[2][0] !== '' ? $match[2][0] : '[^/]+';
            $regex .= '(?P<' . $param . '>' . $constraint . ')';
            $parameters[] = $param;
            $offset = $match[0][1] + strlen($match[0][0]);
        }
        $regex .= preg_quote(substr($pattern, $offset), '#');

        if (count($parameters) !== count(array_unique($parameters))) {
            throw new InvalidArgumentException(sprintf('Duplicate parameter in route "%s".', $pattern));
        }

        $this->regex = '#^' . $regex . '$#';
        $this->parameters = $parameters;
    }

    /**
     * @return array<string, string>|null
     */
    public function matchPath(string $path): ?array
    {
        if (preg_match($this->regex, $path, $m) !== 1) {
            return null;
        }

        $params = [];
        foreach ($this->parameters as $name) {
            $params[$name] = $m[$name];
        }

        return $params;
    }

    public function allows(string $method): bool
    {
        return in_array($method, $this->methods, true)
            || ($method === 'HEAD' && in_array('GET', $this->methods, true));
    }

    /**
     * @param array<string, string|int> $params
     */
    public function path(array $params): string
    {
        $path = $this->pattern;
        foreach ($this->parameters as $name) {
            if (!array_key_exists($name, $params)) {
                throw new InvalidArgumentException(sprintf('Missing parameter "%s" for route "%s".', $name, $this->name));
            }
            $path = (string) preg_replace(
                '/\{' . preg_quote($name, '/') . '(?::[^{}]+)?\}/',
                rawurlencode((string) $params[$name]),
                $path,
                1,
            );
        }

        return $path;
    }
}
