<?php

declare(strict_types=1);

namespace Demo;

use Demo\Controller\ApiController;
use Demo\Controller\ArticleController;
use Demo\Controller\ContactController;
use Demo\Controller\RemoteController;
use Demo\Routing\Router;

final class Routes
{
    public static function define(Router $router): void
    {
        $router->get('home', '/', [ArticleController::class, 'index']);
        $router->get('articles', '/articles', [ArticleController::class, 'index']);
        $router->get('article', '/articles/{id:\d+}', [ArticleController::class, 'show']);
        $router->get('api_articles', '/api/articles', [ApiController::class, 'index']);
        $router->get('api_article', '/api/articles/{id:\d+}', [ApiController::class, 'show']);
        $router->get('contact', '/contact', [ContactController::class, 'form']);
        $router->post('contact_submit', '/contact', [ContactController::class, 'submit']);
        $router->get('remote', '/remote', [RemoteController::class, 'show']);
    }
}
