<?php

declare(strict_types=1);

namespace Demo\Middleware;

use Demo\Http\MiddlewareInterface;
use Demo\Http\Request;
use Demo\Http\RequestHandlerInterface;
use Demo\Http\Response;
use Demo\Http\Status;

/**
 * Content-hash ETags for successful GET/HEAD responses, answering If-None-Match with 304.
 */
final class ETagMiddleware implements MiddlewareInterface
{
    public function process(Request $request, RequestHandlerInterface $next): Response
    {
        $response = $next->handle($request);

        if (!$request->isReadOnly() || $response->status() !== Status::Ok) {
            return $response;
        }
        if (str_contains((string) $response->headers->get('Cache-Control'), 'no-store')) {
            return $response;
        }

        $etag = '"' . substr(hash('sha256', $response->body()), 0, 32) . '"';
        $response->headers->set('ETag', $etag);
        $response->headers->add('Vary', 'Accept-Encoding');

        if ($this->matches($request->header('If-None-Match'), $etag)) {
            $response->setStatus(Status::NotModified);
            $response->setBody('');
            $response->headers->remove('Content-Type');
        }

        return $response;
    }

    private function matches(?string $header, string $etag): bool
    {
        if ($header === null || $header === '') {
            return false;
        }
        if (trim($header) === '*') {
            return true;
        }
        foreach (explode(',', $header) as $candidate) {
            $candidate = trim($candidate);
            if (str_starts_with($candidate, 'W/')) {
                $candidate = substr($candidate, 2);
            }
            if ($candidate === $etag) {
                return true;
            }
        }

        return false;
    }
}
