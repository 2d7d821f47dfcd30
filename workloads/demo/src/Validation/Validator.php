<?php

declare(strict_types=1);

namespace Demo\Validation;

final class Validator
{
    /** @var array<string, array{label: string, rules: list<RuleInterface>}> */
    private array $fields = [];

    public function field(string $name, string $label, RuleInterface ...$rules): self
    {
        $this->fields[$name] = ['label' => $label, 'rules' => array_values($rules)];

        return $this;
    }

    /**
     * @param array<array-key, mixed> $input
     */
    public function validate(array $input): ValidationResult
    {
        $values = [];
        $errors = [];

        foreach ($this->fields as $name => ['label' => $label, 'rules' => $rules]) {
            $raw = $input[$name] ?? '';
            if (!is_string($raw)) {
                $values[$name] = '';
                $errors[$name][] = sprintf('%s must be text.', $label);
                continue;
            }

            $value = trim(str_replace("\r\n", "\n", $raw));
            $values[$name] = $value;

            if (preg_match('//u', $value) !== 1) {
                $errors[$name][] = sprintf('%s is not valid UTF-8.', $label);
                continue;
            }

            foreach ($rules as $rule) {
                $message = $rule->check($label, $value);
                if ($message !== null) {
                    $errors[$name][] = $message;
                    break;
                }
            }
        }

        return new ValidationResult($values, $errors);
    }
}
