import { DefaultNamingStrategy, NamingStrategyInterface } from 'typeorm';

const snake = (name: string): string => name.replace(/([a-z\d])([A-Z])/g, '$1_$2').toLowerCase();

/** Entity properties are camelCase in code and snake_case in the database, as in Forgejo's schema. */
export class SnakeNamingStrategy extends DefaultNamingStrategy implements NamingStrategyInterface {
  override columnName(propertyName: string, customName: string | undefined, prefixes: string[]): string {
    return snake([...prefixes, customName ?? propertyName].join('_'));
  }

  override tableName(className: string, customName: string | undefined): string {
    return customName ?? snake(className);
  }
}
