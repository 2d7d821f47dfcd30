<?php

declare(strict_types=1);

namespace Demo;

use Demo\Container\Container;
use Demo\Http\MiddlewarePipeline;
use Demo\Http\Request;
use Demo\Http\Response;

/**
 * Wires the service container and runs a request through the middleware pipeline.
 */
final class Kernel
{
    private readonly Container $container;

    public function __construct(string $rootDir)
    {
        $this->container = new Container();
        $this->container->instance('root_dir', $rootDir);
        (new AppServiceProvider())->register($this->container);
    }

    public function handle(Request $request): Response
    {
        /** @var MiddlewarePipeline $pipeline */
        $pipeline = $this->container->get(MiddlewarePipeline::class);

        return $pipeline->handle($request);
    }

    public function container(): Container
    {
        return $this->container;
    }
}
