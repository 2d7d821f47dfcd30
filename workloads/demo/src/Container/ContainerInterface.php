<?php

declare(strict_types=1);

namespace Demo\Container;

interface ContainerInterface
{
    /**
     * @throws ServiceNotFoundException
     */
    public function get(string $id): mixed;

    public function has(string $id): bool;
}
