<?php

declare(strict_types=1);

namespace Demo\Routing;

use InvalidArgumentException;

final class Router implements UrlGeneratorInterface
{
    /** @var array<string, Route> */
    private array $routes = [];

    /**
     * @param array{0: string, 1: string} $handler
     */
    public function get(string $name, string $pattern, array $handler): Route
    {
        return $this->add(new Route($name, ['GET'], $pattern, $handler));
    }

    /**
     * @param array{0: string, 1: string} $handler
     */
    public function post(string $name, string $pattern, array $handler): Route
    {
        return $this->add(new Route($name, ['POST'], $pattern, $handler));
    }

    public function add(Route $route): Route
    {
        if (isset($this->routes[$route->name])) {
            throw new InvalidArgumentException(sprintf('Route "%s" is already defined.', $route->name));
        }

        return $this->routes[$route->name] = $route;
    }

    public function match(string $method, string $path): RouteMatch
    {
        $allowed = [];
        foreach ($this->routes as $route) {
            $params = $route->matchPath($path);
            if ($params === null) {
                continue;
            }
            if ($route->allows($method)) {
                return new RouteMatch(MatchStatus::Found, $route, $params);
            }
            array_push($allowed, ...$route->methods);
        }

        if ($allowed === []) {
            return new RouteMatch(MatchStatus::NotFound);
        }
        if (in_array('GET', $allowed, true)) {
            $allowed[] = 'HEAD';
        }
        $allowed = array_values(array_unique($allowed));
        sort($allowed);

        return new RouteMatch(MatchStatus::MethodNotAllowed, allowedMethods: $allowed);
    }

    public function generate(string $name, array $params = [], array $query = []): string
    {
        $route = $this->routes[$name] ?? throw new InvalidArgumentException(sprintf('Unknown route "%s".', $name));
        $path = $route->path($params);
        $query = array_filter($query, static fn (mixed $v): bool => $v !== null && $v !== '');

        return $query === [] ? $path : $path . '?' . http_build_query($query, '', '&', PHP_QUERY_RFC3986);
    }
}
