<?php

declare(strict_types=1);

namespace Demo\Middleware;

use Demo\Http\MiddlewareInterface;
use Demo\Http\Request;
use Demo\Http\RequestHandlerInterface;
use Demo\Http\Response;

/**
 * Adds a Server-Timing header with the time spent in PHP for this request.
 */
final class TimingMiddleware implements MiddlewareInterface
{
    public function process(Request $request, RequestHandlerInterface $next): Response
    {
        $appStarted = hrtime(true);
        $response = $next->handle($request);
        $now = hrtime(true);

        $total = ($now - ($request->startedAt > 0 ? $request->startedAt : $appStarted)) / 1e6;
        $app = ($now - $appStarted) / 1e6;
        $response->headers->set(
            'Server-Timing',
            sprintf('app;dur=%.3f, total;dur=%.3f, mem;desc="peak %dKiB"', $app, $total, intdiv(memory_get_peak_usage(), 1024)),
        );

        return $response;
    }
}
