<?php

declare(strict_types=1);

namespace Demo\Controller;

use Demo\Http\Request;
use Demo\Http\Response;
use Demo\Http\Status;

final class ErrorController extends AbstractController
{
    public function notFound(Request $request): Response
    {
        if ($request->wantsJson()) {
            return $this->error(Status::NotFound, 'phptune-demo:notfound', 'The requested resource does not exist.');
        }

        return $this->render('errors/404', ['title' => 'Not found', 'path' => $request->path], Status::NotFound)
            ->withHeader('Cache-Control', 'no-store');
    }

    /**
     * @param list<string> $allowed
     */
    public function methodNotAllowed(Request $request, array $allowed): Response
    {
        $response = $request->wantsJson()
            ? $this->error(Status::MethodNotAllowed, 'phptune-demo:method', 'Method not allowed.')
            : $this->render('errors/405', [
                'title' => 'Method not allowed',
                'method' => $request->method,
                'allowed' => $allowed,
            ], Status::MethodNotAllowed);

        return $response->withHeader('Allow', implode(', ', $allowed))->withHeader('Cache-Control', 'no-store');
    }

    public function serverError(Request $request): Response
    {
        if ($request->wantsJson()) {
            return $this->error(Status::InternalServerError, 'phptune-demo:error', 'Internal server error.');
        }

        return $this->render('errors/500', ['title' => 'Something went wrong'], Status::InternalServerError)
            ->withHeader('Cache-Control', 'no-store');
    }

    private function error(Status $status, string $marker, string $message): Response
    {
        return $this->json([
            'marker' => $marker,
            'error' => ['status' => $status->value, 'message' => $message],
        ], $status)->withHeader('Cache-Control', 'no-store');
    }
}
