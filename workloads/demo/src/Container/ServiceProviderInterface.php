<?php

declare(strict_types=1);

namespace Demo\Container;

interface ServiceProviderInterface
{
    public function register(Container $container): void;
}
