<?php

declare(strict_types=1);

namespace Demo\Http;

/**
 * Runs the request through each middleware in order, then through the final handler.
 */
final class MiddlewarePipeline implements RequestHandlerInterface
{
    /**
     * @param list<MiddlewareInterface> $middleware
     */
    public function __construct(
        private readonly array $middleware,
        private readonly RequestHandlerInterface $handler,
        private readonly int $position = 0,
    ) {
    }

    public function handle(Request $request): Response
    {
        $current = $this->middleware[$this->position] ?? null;
        if ($current === null) {
            return $this->handler->handle($request);
        }

        return $current->process($request, new self($this->middleware, $this->handler, $this->position + 1));
    }
}
