<?php

declare(strict_types=1);

namespace Demo\Routing;

final readonly class RouteMatch
{
    /**
     * @param array<string, string> $parameters
     * @param list<string>          $allowedMethods
     */
    public function __construct(
        public MatchStatus $status,
        public ?Route $route = null,
        public array $parameters = [],
        public array $allowedMethods = [],
    ) {
    }
}
