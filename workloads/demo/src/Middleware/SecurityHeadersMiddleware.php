<?php

declare(strict_types=1);

namespace Demo\Middleware;

use Demo\Http\MiddlewareInterface;
use Demo\Http\Request;
use Demo\Http\RequestHandlerInterface;
use Demo\Http\Response;

final class SecurityHeadersMiddleware implements MiddlewareInterface
{
    private const HEADERS = [
        'X-Content-Type-Options' => 'nosniff',
        'X-Frame-Options' => 'DENY',
        'Referrer-Policy' => 'strict-origin-when-cross-origin',
        'Permissions-Policy' => 'camera=(), microphone=(), geolocation=()',
        'Cross-Origin-Opener-Policy' => 'same-origin',
    ];

    private const CSP = "default-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; form-action 'self'; frame-ancestors 'none'; base-uri 'none'";

    public function process(Request $request, RequestHandlerInterface $next): Response
    {
        $response = $next->handle($request);

        foreach (self::HEADERS as $name => $value) {
            if (!$response->headers->has($name)) {
                $response->headers->set($name, $value);
            }
        }
        if (str_starts_with((string) $response->headers->get('Content-Type'), 'text/html')) {
            $response->headers->set('Content-Security-Policy', self::CSP);
        }

        return $response;
    }
}
