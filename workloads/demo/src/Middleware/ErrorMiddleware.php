<?php

declare(strict_types=1);

namespace Demo\Middleware;

use Demo\Controller\ErrorController;
use Demo\Http\MiddlewareInterface;
use Demo\Http\NotFoundException;
use Demo\Http\Request;
use Demo\Http\RequestHandlerInterface;
use Demo\Http\Response;
use Demo\Http\Status;
use Throwable;

/**
 * Turns exceptions into error pages; unexpected ones are logged (to the SAPI error log).
 */
final class ErrorMiddleware implements MiddlewareInterface
{
    public function __construct(private readonly ErrorController $errors)
    {
    }

    public function process(Request $request, RequestHandlerInterface $next): Response
    {
        try {
            return $next->handle($request);
        } catch (NotFoundException) {
            return $this->errors->notFound($request);
        } catch (Throwable $e) {
            error_log(sprintf(
                'phptune-demo: %s %s failed: %s: %s at %s:%d',
                $request->method,
                $request->path,
                $e::class,
                $e->getMessage(),
                $e->getFile(),
                $e->getLine(),
            ));

            try {
                return $this->errors->serverError($request);
            } catch (Throwable) {
                return new Response(
                    "<!DOCTYPE html>\n<title>Error</title>\n<!-- phptune-demo:error -->\n<h1>Internal Server Error</h1>\n",
                    Status::InternalServerError,
                );
            }
        }
    }
}
