<?php

declare(strict_types=1);

namespace Demo\Container;

use Closure;
use LogicException;

/**
 * A small service registry: lazily built, shared services from factory closures.
 */
final class Container implements ContainerInterface
{
    /** @var array<string, Closure(Container): mixed> */
    private array $factories = [];

    /** @var array<string, mixed> */
    private array $instances = [];

    /** @var array<string, true> */
    private array $resolving = [];

    /**
     * @param Closure(Container): mixed $factory
     */
    public function set(string $id, Closure $factory): void
    {
        $this->factories[$id] = $factory;
        unset($this->instances[$id]);
    }

    public function instance(string $id, mixed $value): void
    {
        $this->instances[$id] = $value;
    }

    public function get(string $id): mixed
    {
        if (array_key_exists($id, $this->instances)) {
            return $this->instances[$id];
        }
        if (!isset($this->factories[$id])) {
            throw ServiceNotFoundException::forId($id);
        }
        if (isset($this->resolving[$id])) {
            throw new LogicException(sprintf('Circular dependency while resolving "%s".', $id));
        }

        $this->resolving[$id] = true;
        try {
            $service = ($this->factories[$id])($this);
        } finally {
            unset($this->resolving[$id]);
        }

        return $this->instances[$id] = $service;
    }

    public function has(string $id): bool
    {
        return array_key_exists($id, $this->instances) || isset($this->factories[$id]);
    }

    public function string(string $id): string
    {
        $value = $this->get($id);
        if (!is_string($value)) {
            throw new LogicException(sprintf('Parameter "%s" is not a string.', $id));
        }

        return $value;
    }
}
