<?php

declare(strict_types=1);

namespace Demo\Routing;

interface UrlGeneratorInterface
{
    /**
     * @param array<string, string|int>      $params
     * @param array<string, string|int|null> $query
     */
    public function generate(string $name, array $params = [], array $query = []): string;
}
