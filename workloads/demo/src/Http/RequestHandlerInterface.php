<?php

declare(strict_types=1);

namespace Demo\Http;

interface RequestHandlerInterface
{
    public function handle(Request $request): Response;
}
