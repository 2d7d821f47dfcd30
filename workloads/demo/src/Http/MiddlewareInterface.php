<?php

declare(strict_types=1);

namespace Demo\Http;

interface MiddlewareInterface
{
    public function process(Request $request, RequestHandlerInterface $next): Response;
}
